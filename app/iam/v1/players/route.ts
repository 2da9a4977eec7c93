import { routes } from "@/lib/http/routes";
import { createAuthPlayerOperation, listAuthPlayersOperation } from "@/lib/iam/player-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listAuthPlayersOperation, createAuthPlayerOperation);
