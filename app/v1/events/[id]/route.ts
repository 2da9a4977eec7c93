import { deleteEvent, getEvent } from "@/lib/events/operations";
import { routes } from "@/lib/http/routes";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getEvent, deleteEvent);
