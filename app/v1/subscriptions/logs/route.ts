import { routes } from "@/lib/http/routes";
import { listSubscriptionLogs } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listSubscriptionLogs);
