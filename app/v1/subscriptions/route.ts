import { routes } from "@/lib/http/routes";
import { getSubscriptions, createSubscription } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSubscriptions, createSubscription);
