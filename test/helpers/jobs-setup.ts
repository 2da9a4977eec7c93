import { registerJobs } from "@/inngest/jobs";

// The tests' composition root, as instrumentation.ts is the server's: the jobs lib/ sends go to this worker's embedded
// runner (started on the first, or by the test), or to Inngest when a test configures it.
registerJobs();
