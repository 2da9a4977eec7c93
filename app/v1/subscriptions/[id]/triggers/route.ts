import { routes } from "@/lib/http/routes";
import { getTriggers, createTrigger } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getTriggers, createTrigger);
