/** Something that runs beside the HTTP server (task pollers, sweepers, log writers). */
export interface BackgroundService {
  readonly name: string;
  start(): void;
  /** Stops and waits for work in progress; called before the store closes. */
  stop(): Promise<void>;
}
