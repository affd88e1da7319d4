import type { JsonObject, JsonValue } from '../../src';
import type { SuiteName } from './data';
import { addressResource, named, webResource } from './resourceNames';

/**
 * Resource kinds: the prefix a kind's names share. A grant either holds the whole kind (the prefix
 * as a scope) or, where the host's facts list its members, exactly those names.
 */
export const kinds = {
  /** An address a call sends data to or shares data with (mail, invitations, shares). */
  mailTo: 'mail:/to/',
  driveFile: 'drive:/file/',
  calendarEvent: 'calendar:/event/',
  bankIban: 'bank:/iban/',
  bankFile: 'bank:/file/',
  hotel: 'travel:/hotel/',
  car: 'travel:/car/',
  restaurant: 'travel:/restaurant/',
  slackChannel: 'slack:/channel/',
  slackUser: 'slack:/user/',
  slackInbox: 'slack:/inbox/',
  web: 'web:/',
} as const;
export type Kind = (typeof kinds)[keyof typeof kinds];

/** What a tool touches: the kinds it may name (for grants) and the names of one call (for checks). */
export interface ResourceRule {
  readonly kinds: readonly Kind[];
  readonly resources: (args: JsonObject) => string[];
}

// Arguments reach `resources` only after the tool's schema accepted them; anything else throws,
// which the ledger turns into invalid_resource (fail closed).
function text(value: JsonValue | undefined): string {
  if (typeof value !== 'string') throw new TypeError('expected a string argument');
  return value;
}

function texts(value: JsonValue | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError('expected an array argument');
  return value.map(text);
}

const addresses = (...values: (JsonValue | undefined)[]): string[] => values.flatMap(texts).map(addressResource);

function attachedFileIds(value: JsonValue | undefined): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new TypeError('expected an array of attachments');
  return value.flatMap((item) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new TypeError('expected an attachment object');
    return item.type === 'file' ? [named(kinds.driveFile, text(item.file_id))] : [];
  });
}

const rule = (ruleKinds: readonly Kind[], resources: (args: JsonObject) => string[]): ResourceRule => ({ kinds: ruleKinds, resources });

const sendEmail = (withDrive: boolean): ResourceRule =>
  rule(withDrive ? [kinds.mailTo, kinds.driveFile] : [kinds.mailTo], (a) => [...addresses(a.recipients, a.cc, a.bcc), ...(withDrive ? attachedFileIds(a.attachments) : [])]);
const participants = rule([kinds.mailTo], (a) => addresses(a.participants));
const calendarEvent = rule([kinds.calendarEvent], (a) => [named(kinds.calendarEvent, text(a.event_id))]);
const driveFile = rule([kinds.driveFile], (a) => [named(kinds.driveFile, text(a.file_id))]);
const payment = rule([kinds.bankIban], (a) => [named(kinds.bankIban, text(a.recipient))]);
const channel = rule([kinds.slackChannel], (a) => [named(kinds.slackChannel, text(a.channel))]);
const web = rule([kinds.web], (a) => [webResource(text(a.url))]);

/** Per suite, the tools that touch something worth scoping. Tools not listed name no resources. */
export const suiteResourceRules: Readonly<Record<SuiteName, Readonly<Record<string, ResourceRule>>>> = {
  workspace: {
    send_email: sendEmail(true),
    create_calendar_event: participants,
    add_calendar_event_participants: rule([kinds.calendarEvent, kinds.mailTo], (a) => [named(kinds.calendarEvent, text(a.event_id)), ...addresses(a.participants)]),
    cancel_calendar_event: calendarEvent,
    reschedule_calendar_event: calendarEvent,
    append_to_file: driveFile,
    delete_file: driveFile,
    get_file_by_id: driveFile,
    share_file: rule([kinds.driveFile, kinds.mailTo], (a) => [named(kinds.driveFile, text(a.file_id)), ...addresses([text(a.email)])]),
  },
  travel: {
    send_email: sendEmail(false),
    create_calendar_event: participants,
    cancel_calendar_event: calendarEvent,
    reserve_hotel: rule([kinds.hotel], (a) => [named(kinds.hotel, text(a.hotel))]),
    reserve_car_rental: rule([kinds.car], (a) => [named(kinds.car, text(a.company))]),
    reserve_restaurant: rule([kinds.restaurant], (a) => [named(kinds.restaurant, text(a.restaurant))]),
  },
  banking: {
    send_money: payment,
    schedule_transaction: payment,
    update_scheduled_transaction: rule([kinds.bankIban], (a) => (typeof a.recipient === 'string' ? [named(kinds.bankIban, a.recipient)] : [])),
    read_file: rule([kinds.bankFile], (a) => [named(kinds.bankFile, text(a.file_path))]),
  },
  slack: {
    add_user_to_channel: rule([kinds.slackChannel, kinds.slackUser], (a) => [named(kinds.slackChannel, text(a.channel)), named(kinds.slackUser, text(a.user))]),
    read_channel_messages: channel,
    get_users_in_channel: channel,
    send_channel_message: channel,
    read_inbox: rule([kinds.slackInbox], (a) => [named(kinds.slackInbox, text(a.user))]),
    send_direct_message: rule([kinds.slackUser], (a) => [named(kinds.slackUser, text(a.recipient))]),
    invite_user_to_slack: rule([kinds.slackUser, kinds.mailTo], (a) => [named(kinds.slackUser, text(a.user)), ...addresses([text(a.user_email)])]),
    remove_user_from_slack: rule([kinds.slackUser], (a) => [named(kinds.slackUser, text(a.user))]),
    get_webpage: web,
    post_webpage: web,
  },
};
