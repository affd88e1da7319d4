import type { EventPayload } from './events';

/** Why a host command was refused. Host commands fail loudly; agent calls are rejected as events. */
export type HostCommandErrorCode = 'invalid_tool' | 'tool_conflict' | 'invalid_grant' | 'duplicate_grant' | 'unknown_grant' | 'unknown_call' | 'call_not_due'
  | 'unknown_approval' | 'approval_resolved' | 'approval_expired' | 'approval_not_due' | 'invalid_approval' | 'approval_required';

export type Decision =
  | { readonly ok: true; readonly events: readonly EventPayload[] }
  | { readonly ok: false; readonly code: HostCommandErrorCode; readonly message: string };

export const none: Decision = Object.freeze({ ok: true, events: Object.freeze([]) });
export const emit = (...events: EventPayload[]): Decision => ({ ok: true, events });
export const refuse = (code: HostCommandErrorCode, message: string): Decision => ({ ok: false, code, message });

