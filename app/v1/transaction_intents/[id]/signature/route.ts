import { routes } from "@/lib/http/routes";
import { signIntent } from "@/lib/intents/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(signIntent);
