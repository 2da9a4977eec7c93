import { routes } from "@/lib/http/routes";
import { deleteAuthPlayerOperation, getAuthPlayerOperation } from "@/lib/iam/player-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getAuthPlayerOperation, deleteAuthPlayerOperation);
