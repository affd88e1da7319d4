import type { IntegrityStatus } from '../chainVerifier';
import type { CheckpointStatus } from '../checkpoint';
import { el, formatCount } from './dom';

/** The verify status this page computed itself: the chain, and a checkpoint when the server offers one. */
export function drawIntegrity(container: HTMLElement, status: IntegrityStatus | 'unavailable', received: number, checkpoint: CheckpointStatus | undefined): void {
  if (status === 'unavailable') {
    container.dataset.state = 'unavailable';
    container.replaceChildren(el('strong', {}, 'integrity not checked: '), 'this browser offers no WebCrypto here (a page served over plain HTTP from another machine is not a secure context); open it over loopback or HTTPS');
    return;
  }
  container.dataset.verifiedThrough = String(status.verifiedThrough);
  const lines: (Node | string)[] = [];
  if (status.firstBad !== undefined) {
    container.dataset.state = 'bad';
    container.dataset.firstBadSeq = String(status.firstBad.seq);
    lines.push(el('strong', {}, `integrity: first bad seq ${status.firstBad.seq}`), ` — ${status.firstBad.problem}. Verified through seq ${formatCount(status.verifiedThrough)}; nothing after it is trusted.`);
  } else {
    container.dataset.state = status.verifiedThrough === received ? 'ok' : 'checking';
    delete container.dataset.firstBadSeq;
    lines.push(el('strong', {}, `verified through seq ${formatCount(status.verifiedThrough)}`), received > status.verifiedThrough ? ` (checking ${formatCount(received - status.verifiedThrough)} more)` : ' — hash chain re-computed in this browser (SHA-256 of RFC 8785 canonical JSON)');
  }
  if (checkpoint !== undefined) {
    container.dataset.checkpoint = checkpoint.state;
    lines.push(el('br'), el('span', { class: `cp ${checkpoint.state}` }, checkpoint.message));
  }
  container.replaceChildren(...lines);
}
