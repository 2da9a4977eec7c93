import { routes } from "@/lib/http/routes";
import { getSubscription, deleteSubscription } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSubscription, deleteSubscription);
