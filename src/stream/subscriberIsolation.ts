import { config } from 'rxjs';

let installed = false;

/**
 * RxJS catches an error thrown by a subscriber and rethrows it on a timer, which would crash the
 * host process. The contract promises that a throwing subscriber breaks neither admission, nor other
 * subscribers, nor the process, so the first ledger created installs `config.onUnhandledError`
 * unless the host set one already; the error is reported as a process warning (its message is not
 * printed: it may hold data from the host's own code).
 */
export function isolateSubscriberErrors(): void {
  if (installed || config.onUnhandledError !== null) return;
  installed = true;
  config.onUnhandledError = (error: unknown) => {
    const name = error instanceof Error ? error.name : typeof error;
    process.emitWarning(`an RxJS subscriber threw (${name}); agent-tool-capabilities isolated it`, { code: 'ATC_SUBSCRIBER_ERROR' });
  };
}
