import { getLinkStatus } from "@/lib/signing/routes";

export const dynamic = "force-dynamic";
export const GET = getLinkStatus;
