import { routes } from "@/lib/http/routes";
import { createSubscription, getSubscriptions } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSubscriptions, createSubscription);
