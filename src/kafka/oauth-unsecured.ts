/**
 * Java's default OAUTHBEARER login (OAuthBearerUnsecuredLoginCallbackHandler): an unsigned JWS (`alg: none`)
 * built from the JAAS options `unsecuredLoginStringClaim_<name>`, `unsecuredLoginNumberClaim_<name>`,
 * `unsecuredLoginListClaim_<name>` (first character = separator), `unsecuredLoginPrincipalClaimName` (sub),
 * `unsecuredLoginLifetimeSeconds` (3600). For development brokers only: anyone can write such a token.
 * Messages name the options, never their values.
 */
import { ClientConfigError } from './client-config-error.ts'
import type { Token } from './oauth-token-cache.ts'

const PREFIX = 'unsecuredLogin'

/** A token factory for these options; throws ClientConfigError when Java would refuse them. */
export function unsecuredToken (options: Readonly<Record<string, string>>): (now: number) => Token {
  const principalClaim = options[`${PREFIX}PrincipalClaimName`]?.trim() || 'sub'
  const lifetime = Number(options[`${PREFIX}LifetimeSeconds`] ?? '3600')
  if (!Number.isSafeInteger(lifetime) || lifetime <= 0) {
    throw new ClientConfigError('sasl.jaas.config', `has an ${PREFIX}LifetimeSeconds option that is not a whole number of seconds above 0: fix it`)
  }
  const claims = customClaims(options)
  const principal = claims[principalClaim]
  if (typeof principal !== 'string' || principal.trim() === '') {
    const claim = principalClaim === 'sub' ? 'sub' : '<the claim unsecuredLoginPrincipalClaimName names>'
    throw new ClientConfigError('sasl.jaas.config', `has no ${PREFIX}StringClaim_${claim}="<principal>": without sasl.login.callback.handler.class, OAUTHBEARER uses Java's unsecured tokens, which need the principal claim (or set the handler class and a token endpoint)`)
  }
  return now => {
    const iat = now / 1000
    const payload = { ...claims, exp: Math.floor(iat) + lifetime, iat }
    const encode = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url')
    return { value: `${encode({ alg: 'none' })}.${encode(payload)}.`, expiresAt: (Math.floor(iat) + lifetime) * 1000, issuedAt: now }
  }
}

function customClaims (options: Readonly<Record<string, string>>): Record<string, string | number | string[]> {
  const claims: Record<string, string | number | string[]> = {}
  for (const [key, value] of Object.entries(options)) {
    const [kind, name] = claimOf(key)
    if (kind === undefined || name === '') continue
    if (name === 'iat' || name === 'exp') throw new ClientConfigError('sasl.jaas.config', `sets the ${name} claim (${key}), which Java refuses: remove it`)
    if (kind === 'String') claims[name] = value
    else if (kind === 'Number') claims[name] = numberClaim(key, value)
    else claims[name] = value.length <= 1 ? [] : value.slice(1).split(value[0] as string)
  }
  return claims
}

function claimOf (key: string): [('String' | 'Number' | 'List') | undefined, string] {
  for (const kind of ['String', 'Number', 'List'] as const) {
    const prefix = `${PREFIX}${kind}Claim_`
    if (key.startsWith(prefix)) return [kind, key.slice(prefix.length)]
  }
  return [undefined, '']
}

function numberClaim (key: string, value: string): number {
  const number = Number(value)
  if (!Number.isFinite(number) || value.trim() === '') throw new ClientConfigError('sasl.jaas.config', `has a ${key} option whose value is not a number: write a number`)
  return number
}
