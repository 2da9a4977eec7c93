import { routes } from "@/lib/http/routes";
import { createEvent, listEvents } from "@/lib/monitors/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(listEvents, createEvent);
