import { routes } from "@/lib/http/routes";
import { deletePlayer, getPlayer, updatePlayer } from "@/lib/players/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getPlayer, updatePlayer, deletePlayer);
