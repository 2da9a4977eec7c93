import { routes } from "@/lib/http/routes";
import { removeWebhook, updateWebhook } from "@/lib/webhooks/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(updateWebhook, removeWebhook);
