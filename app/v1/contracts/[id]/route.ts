import { routes } from "@/lib/http/routes";
import { deleteContract, getContract, updateContract } from "@/lib/contracts/operations";

export const { GET, POST, PUT, PATCH, DELETE } = routes(getContract, updateContract, deleteContract);
