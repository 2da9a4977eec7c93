import { routes } from "@/lib/http/routes";
import { createIntent, listIntents } from "@/lib/intents/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listIntents, createIntent);
