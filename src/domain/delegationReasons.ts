/**
 * Why an attenuation or an agent's revocation was refused. Stable strings in precedence order (the
 * first failing check decides); the authority reasons mean what they mean for a call.
 */
export const attenuationRejectReasons = ['unknown_token', 'revoked', 'not_yet_valid', 'expired', 'attenuation_invalid', 'attenuation_widens'] as const;
export type AttenuationRejectReason = (typeof attenuationRejectReasons)[number];

export const revocationRejectReasons = ['unknown_token', 'revoked', 'not_yet_valid', 'expired', 'not_a_descendant'] as const;
export type RevocationRejectReason = (typeof revocationRejectReasons)[number];

export type DelegationRejectReason = AttenuationRejectReason | RevocationRejectReason;

// Messages explain the reason; they never echo a token, a schema or a value of the request.
const messages: Readonly<Record<DelegationRejectReason, string>> = {
  unknown_token: 'the token does not match any grant',
  revoked: 'the grant or one of its ancestors was revoked',
  not_yet_valid: 'the grant is not valid yet (before notBefore)',
  expired: 'the grant has expired (at or after expiresAt)',
  attenuation_invalid: 'the attenuation request is malformed',
  attenuation_widens: 'the attenuation asks for more than the grant has (tools, narrowing, resources, window, budget left, or delegation depth)',
  not_a_descendant: 'that grant is not below this token\'s grant',
};

export function delegationRejectMessage(reason: DelegationRejectReason): string {
  return messages[reason];
}
