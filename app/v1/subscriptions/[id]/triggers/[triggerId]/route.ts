import { routes } from "@/lib/http/routes";
import { getTrigger, deleteTrigger } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getTrigger, deleteTrigger);
