import { routes } from "@/lib/http/routes";
import { enableTrigger } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(enableTrigger);
