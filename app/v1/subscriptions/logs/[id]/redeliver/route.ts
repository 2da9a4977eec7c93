import { routes } from "@/lib/http/routes";
import { redeliverLog } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(redeliverLog);
