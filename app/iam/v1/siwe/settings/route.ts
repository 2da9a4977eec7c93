import { routes } from "@/lib/http/routes";
import { getSiweSettingsOperation, updateSiweSettingsOperation } from "@/lib/iam/siwe-operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getSiweSettingsOperation, updateSiweSettingsOperation);
