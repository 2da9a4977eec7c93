import { routes } from "@/lib/http/routes";
import { testTrigger } from "@/lib/subscriptions/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(testTrigger);
