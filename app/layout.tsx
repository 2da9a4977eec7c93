import type { ReactNode } from "react";

export const metadata = {
  title: "Smart-account wallet service",
  description: "Smart accounts and gas sponsorship for games and apps",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", margin: "2rem", lineHeight: 1.5 }}>{children}</body>
    </html>
  );
}
