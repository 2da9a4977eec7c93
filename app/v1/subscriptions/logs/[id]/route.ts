import { routes } from "@/lib/http/routes";
import { getSubscriptionLog } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSubscriptionLog);
