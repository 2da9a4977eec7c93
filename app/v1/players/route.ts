import { routes } from "@/lib/http/routes";
import { createPlayer, listPlayers } from "@/lib/players/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listPlayers, createPlayer);
