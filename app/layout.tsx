import type { ReactNode } from "react";
import "./globals.css";

export const metadata = {
  title: "Smart-account wallet service",
  description: "Smart accounts and gas sponsorship for games and apps",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body className="min-h-screen bg-slate-50 font-sans text-slate-900 antialiased">{children}</body>
    </html>
  );
}
