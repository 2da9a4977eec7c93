import { routes } from "@/lib/http/routes";
import { createTrigger, getTriggers } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getTriggers, createTrigger);
