/**
 * For the stream relays' order of work at the end of a stream: a ledger whose settlements are
 * recorded, and a sink that records what the relay tells it, in one list of steps.
 */
export function settlingRecorder<L extends { settle(...args: never[]): Promise<unknown> }>(ledger: L) {
  const steps: string[] = [];
  const recording = Object.create(ledger) as L;
  recording.settle = ((...args: Parameters<L["settle"]>) => {
    steps.push("settle");
    return ledger.settle(...args);
  }) as L["settle"];
  const sink = {
    async event() {
      steps.push("event");
    },
    settling() {
      steps.push("settling");
    },
    async fail() {
      steps.push("fail");
    },
    async end() {
      steps.push("end");
    },
  };
  return {
    steps,
    ledger: recording,
    sink,
    /** The steps after the relay's last event. */
    afterLastEvent: () => steps.slice(steps.lastIndexOf("event") + 1),
    events: () => steps.filter((step) => step === "event").length,
  };
}
