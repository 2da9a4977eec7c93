import { routes } from "@/lib/http/routes";
import { deleteEvent, getEvent } from "@/lib/monitors/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getEvent, deleteEvent);
