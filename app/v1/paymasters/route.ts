import { routes } from "@/lib/http/routes";
import { createPaymaster, listPaymasters } from "@/lib/paymasters/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listPaymasters, createPaymaster);
