import { routes } from "@/lib/http/routes";
import { deletePaymaster, getPaymaster, updatePaymaster } from "@/lib/paymasters/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPaymaster, updatePaymaster, deletePaymaster);
