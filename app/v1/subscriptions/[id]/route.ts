import { routes } from "@/lib/http/routes";
import { deleteSubscription, getSubscription } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSubscription, deleteSubscription);
