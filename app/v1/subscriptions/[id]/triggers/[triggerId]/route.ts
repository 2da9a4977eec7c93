import { routes } from "@/lib/http/routes";
import { deleteTrigger, getTrigger } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getTrigger, deleteTrigger);
