import { routes } from "@/lib/http/routes";
import { getIntent } from "@/lib/intents/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getIntent);
