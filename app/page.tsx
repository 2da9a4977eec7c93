export default function Home() {
  return (
    <main>
      <h1>Smart-account wallet service</h1>
      <p>
        The API is served under <code>/v1</code>; its description is at <a href="/v1/openapi.json">/v1/openapi.json</a>.
      </p>
      <p>
        Your project&apos;s keys were printed when the service started and saved in <code>.data/default-project.json</code>.
      </p>
    </main>
  );
}
