import { chainLabel } from "@/lib/dashboard/chains";
import { unixSeconds } from "@/lib/http/resource";
import { Badge } from "./badge";
import { Mono } from "./code";
import { Table } from "./table";
import { Time } from "./time";

interface AccountLike {
  id: string;
  playerId: string;
  chainId: number;
  address: string;
  ownerAddress: string;
  custodial: boolean;
  deployed: boolean;
  createdAt: Date;
}

export function AccountsTable({ accounts, base, showPlayer = false }: { accounts: AccountLike[]; base: string; showPlayer?: boolean }) {
  if (accounts.length === 0) return <p className="text-sm text-slate-500">No accounts yet.</p>;
  return (
    <Table
      rows={accounts}
      rowKey={(a) => a.id}
      rowHref={(a) => `${base}/accounts/${a.id}`}
      columns={[
        { header: "Address", cell: (a) => <Mono value={a.address} /> },
        { header: "Chain", cell: (a) => chainLabel(a.chainId) },
        { header: "Custody", cell: (a) => (a.custodial ? <Badge tone="blue">custodial</Badge> : <Badge>own wallet</Badge>) },
        { header: "Deployed", cell: (a) => (a.deployed ? <Badge tone="green">deployed</Badge> : <Badge tone="amber">counterfactual</Badge>) },
        ...(showPlayer ? [{ header: "Player", cell: (a: AccountLike) => <span className="font-mono text-xs">{a.playerId}</span> }] : []),
        { header: "Created", cell: (a) => <Time seconds={unixSeconds(a.createdAt)} /> },
      ]}
    />
  );
}
