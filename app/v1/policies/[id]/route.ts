import { routes } from "@/lib/http/routes";
import { deletePolicy, getPolicy, updatePolicy } from "@/lib/policies/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPolicy, updatePolicy, deletePolicy);
