import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeConfig, selectFlows } from '../../../src/config/load.ts'
import { isSecretKey, redactValue, SecretKinds, secretKeyKind, secretValues } from '../../../src/config/secrets.ts'
import { Redactor, REDACTED } from '../../../src/redactor.ts'
import { parse, twoClusters, warningsFor } from './fixtures.ts'

const JAAS = (password: string): string => `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="${password}";`

describe('isSecretKey', () => {
  it('knows the Java client\'s password keys under any prefix', () => {
    for (const key of ['sasl.jaas.config', 'A.ssl.keystore.password', 'A.consumer.ssl.key.password', 'A->B.source.admin.ssl.truststore.password',
      'B.producer.override.ssl.keystore.key', 'sasl.oauthbearer.client.credentials.client.secret', 'A.sasl.oauthbearer.assertion.private.key.passphrase']) {
      assert.ok(isSecretKey(key), key)
    }
  })

  it('finds misspelt password keys and keys whose name says secret', () => {
    for (const key of ['sasl.jaas.confg', 'ssl.keystore.pasword', 'ssl.truststore.passwrd', 'A.consumer.sasl.jaas.confg', 'A->B.ssl.key.pasword',
      'my.api.secret', 'db.passwd', 'A.consumer.basic.auth.credentials', 'vault_token', 'admin.password', 'db.secret.name', 'A.consumer.my-token.enabled']) {
      assert.ok(isSecretKey(key), key)
    }
  })

  it('finds the common credential key names of other tools: user info, api keys, pwd and pass as words', () => {
    for (const key of ['A.consumer.basic.auth.user.info', 'A.consumer.api_key', 'A.consumer.api-key', 'A.consumer.api.key', 'A.consumer.db.pwd', 'B.producer.smtp.pass', 'A.consumer.private_key', 'aws.access_key']) {
      assert.ok(isSecretKey(key), key)
    }
    for (const key of ['A.consumer.bypass.cache', 'A.consumer.passive.mode', 'A.consumer.keystore.flavour', 'A.consumer.monkey.count', 'A.consumer.key.deserializer', 'key.converter.schemas.enable']) {
      assert.ok(!isSecretKey(key), key)
    }
  })

  it('leaves known non-secret keys readable, certificates included', () => {
    for (const key of ['bootstrap.servers', 'A.ssl.keystore.location', 'ssl.truststore.certificates', 'A.ssl.keystore.certificate.chain',
      'sasl.oauthbearer.token.endpoint.url', 'A.consumer.fetch.max.bytes', 'topics', 'A->B.sync.topic.acls.enabled', 'A.sasl.mechanism']) {
      assert.ok(!isSecretKey(key), key)
    }
  })
})

describe('secretKeyKind', () => {
  it('is certain for password keys under any prefix and their misspellings, guessed for keys named like secrets', () => {
    for (const key of ['ssl.keystore.password', 'A.consumer.sasl.jaas.config', 'ssl.keystore.pasword', 'A.consumer.sasl.jaas.confg']) {
      assert.equal(secretKeyKind(key), SecretKinds.CERTAIN, key)
    }
    for (const key of ['my.api.secret', 'db.passwd', 'vault_token', 'db.secret.name']) assert.equal(secretKeyKind(key), SecretKinds.GUESSED, key)
    assert.equal(secretKeyKind('A.consumer.fetch.max.bytes'), undefined)
  })

  it('Given a cluster alias or flow prefix with a secret word, then it says nothing about the value: the rest of the key decides', () => {
    const aliases = ['WRONGSECRET', 'dc.tokens', 'B']
    for (const key of ['WRONGSECRET.bootstrap.servers', 'WRONGSECRET.sasl.mechanism', 'dc.tokens.consumer.client.rack', 'WRONGSECRET->B.topics', 'B->dc.tokens.enabled']) {
      assert.equal(secretKeyKind(key, aliases), undefined, key)
    }
    assert.equal(secretKeyKind('WRONGSECRET.sasl.jaas.config', aliases), SecretKinds.CERTAIN)
    assert.equal(secretKeyKind('WRONGSECRET.my.api.token', aliases), SecretKinds.GUESSED)
    const config = parse(['clusters = WRONGSECRET, B', 'WRONGSECRET.bootstrap.servers = broker-a:9092', 'B.bootstrap.servers = b:9092',
      'WRONGSECRET->B.enabled = true', 'WRONGSECRET.security.protocol = SASL_PLAINTEXT', 'WRONGSECRET.sasl.mechanism = OAUTHBEARER'].join('\n'))
    assert.deepEqual(config.secrets, { certain: [], guessed: [] })
  })
})

describe('secretValues', () => {
  it('collects whole values of secret keys, JAAS option values under any key, and PEM private keys', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----'
    const secrets = secretValues({
      'ssl.keystore.pasword': 'ks-pass',
      'A.custom.login': 'com.example.Login required username="bob" token=tok-en1 password="p\\"w";',
      'A.cert': pem,
      'my.api.token': 'api-token-1',
      'bootstrap.servers': 'b:9092'
    })
    assert.deepEqual(new Set(secrets.certain), new Set(['ks-pass', 'tok-en1', 'p\\"w', 'p"w', pem]))
    assert.deepEqual(secrets.guessed, ['api-token-1'])
  })

  it('Given numeric and short passwords (keytool\'s 123456), then they are certain secrets', () => {
    const secrets = secretValues({ 'A.ssl.keystore.password': '123456', 'A.sasl.jaas.config': 'x required username="u" password="ab";' })
    assert.deepEqual(new Set(secrets.certain), new Set(['123456', 'x required username="u" password="ab";', 'ab']))
    // kept without quotes: the Redactor finds the quoted form through the bare one
    assert.equal(new Redactor(secrets).redact('sent password="ab", then pin=123456'), `sent password="${REDACTED}", then pin=${REDACTED}`)
  })

  it('Given a JAAS line of Java\'s unsecured tokens, then its lifetime, claims and claim names are no secrets, and other options still are', () => {
    const jaas = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kmirror" ' +
      'unsecuredLoginLifetimeSeconds="3600" unsecuredLoginNumberClaim_level="7" unsecuredLoginListClaim_scope=",a,b" unsecuredLoginPrincipalClaimName="sub" ' +
      'unsecuredLoginScopeClaimName="scope" unsecuredLoginExtension_token="ext-secret" tokenauth="true" password="42";'
    assert.deepEqual(new Set(secretValues({ 'A.sasl.jaas.config': jaas }).certain), new Set([jaas, 'ext-secret', '42']))
    assert.equal(redactValue('A.sasl.jaas.config', jaas), jaas.replace('"ext-secret"', '"[redacted]"').replace('"42"', '"[redacted]"'))
  })

  it('Given values from config providers, then they are certain secrets, except numbers, flags and choices, and the cluster aliases', () => {
    const secrets = secretValues(
      { 'A->B.topics': 'orders', 'A->B.replication.factor': '3', 'A.consumer.isolation.level': 'read_committed', 'A->B.enabled': 'true', clusters: 'A, B' },
      new Map([['A->B.topics', ['ord']], ['A->B.replication.factor', ['3']], ['A.consumer.isolation.level', ['read_committed']], ['A->B.enabled', ['true']], ['clusters', ['A, B']]]))
    assert.deepEqual(secrets.certain, ['ord'])
    assert.deepEqual(new Set(secrets.guessed), new Set(['3', 'read_committed', 'true']))
  })

  it('skips references left unresolved: the messages show them instead of the value', () => {
    assert.deepEqual(secretValues({ 'ssl.key.password': '${file:/x:y}', 'sasl.jaas.config': 'x required password="${file:/x:y}";' }).certain, ['x required password="${file:/x:y}";'])
  })
})

describe('URL values (sasl.oauthbearer.token.endpoint.url)', () => {
  const url = 'https://kmirror-app:url-password@idp.example/oauth2/token?client_secret=query-secret#part'

  it('counts the user info and the query of a URL as secrets, whatever the key', () => {
    const secrets = secretValues({ 'A.sasl.oauthbearer.token.endpoint.url': url, 'A.bootstrap.servers': 'a:9092', 'B.other.url': 'http://plain.example/path' })
    assert.deepEqual(secrets, { certain: ['kmirror-app:url-password', 'url-password', 'client_secret=query-secret'], guessed: [] })
  })

  it('shows a URL without its user info and query in kmirror validate', () => {
    assert.equal(redactValue('A.sasl.oauthbearer.token.endpoint.url', url), 'https://[redacted]@idp.example/oauth2/token?[redacted]#part')
    assert.equal(redactValue('sasl.oauthbearer.token.endpoint.url', 'https://idp.example/token'), 'https://idp.example/token')
    const config = parse(twoClusters(`A.sasl.oauthbearer.token.endpoint.url = ${url}`))
    const text = describeConfig(config, selectFlows(config))
    assert.match(text, /sasl\.oauthbearer\.token\.endpoint\.url = https:\/\/\[redacted\]@idp\.example\/oauth2\/token\?\[redacted\]#part/)
    assert.equal(/url-password|query-secret|kmirror-app/.test(text), false, text)
  })
})

describe('redactValue', () => {
  it('hides the options of any JAAS line but keeps the username', () => {
    const jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr\\"et";'
    assert.equal(redactValue('sasl.jaas.config', jaas), 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="[redacted]";')
    assert.equal(redactValue('A.consumer.sasl.jaas.confg', 'x required username=bob password=hunter2;'), 'x required username=bob password="[redacted]";')
    assert.equal(redactValue('A.consumer.login.line', 'x required username=bob clientSecret = "c";'), 'x required username=bob clientSecret = "[redacted]";')
  })

  it('hides what Java reads as the value: single quotes with blanks, escapes, a JAAS line that starts with a comment', () => {
    const jaas = '/* prod */ x.Login required username=\'bob\' password=\'two words\' secret="t\\tab";'
    assert.equal(redactValue('A.login.line', jaas), '/* prod */ x.Login required username=\'bob\' password="[redacted]" secret="[redacted]";')
    const secrets = secretValues({ 'A.login.line': jaas }).certain
    for (const secret of ['two words', 't\\tab', 't\tab']) assert.ok(secrets.includes(secret), `${JSON.stringify(secret)} in ${JSON.stringify(secrets)}`)
    assert.equal(secrets.includes('bob'), false)
  })

  it('hides the whole of an unquoted value that Java splits or does not read (P@ssw0rd, 12345678, a URL)', () => {
    const jaas = 'x.Login required username=bob password=P@ssw0rd pin=12345678 token=-T0k#en uri=https://u:pw@idp/token;'
    assert.equal(redactValue('A.login.line', jaas), 'x.Login required username=bob password="[redacted]" pin="[redacted]" token="[redacted]" uri="[redacted]";')
    const secrets = secretValues({ 'A.login.line': jaas }).certain
    for (const secret of ['P@ssw0rd', '12345678', '-T0k#en', 'https://u:pw@idp/token']) assert.ok(secrets.includes(secret), `${JSON.stringify(secret)} in ${JSON.stringify(secrets)}`)
  })

  it('hides whole values of password keys, misspelt ones, and private keys', () => {
    for (const key of ['ssl.truststore.password', 'ssl.key.password', 'A.ssl.keystore.password', 'sasl.oauthbearer.client.secret', 'ssl.keystore.key', 'ssl.keystore.pasword']) {
      assert.equal(redactValue(key, 'x'), '[redacted]', key)
    }
    assert.equal(redactValue('A.note', '-----BEGIN ENCRYPTED PRIVATE KEY-----\n...'), '[redacted]')
  })

  it('shows non-secret values unchanged', () => {
    for (const key of ['ssl.keystore.location', 'ssl.keystore.type', 'ssl.truststore.certificates', 'bootstrap.servers']) {
      assert.equal(redactValue(key, 'v'), 'v', key)
    }
  })
})

describe('kmirror validate\'s text', () => {
  it('warns about misspelt secret keys with a suggestion and never shows their values', () => {
    const config = parse(twoClusters(
      `sasl.jaas.confg = ${JAAS('misspelt-top-secret')}`,
      'ssl.keystore.pasword = keystore-misspelt',
      'ssl.truststore.passwrd = truststore-misspelt',
      `A.consumer.sasl.jaas.confg = ${JAAS('consumer-misspelt')}`,
      'A.security.protocol = SASL_PLAINTEXT', 'A.sasl.mechanism = PLAIN', `A.sasl.jaas.config = ${JAAS('correct-secret')}`
    ))
    assert.deepEqual(warningsFor(config, 'sasl.jaas.confg'), ['is not a key kmirror or MM2 knows, so it is ignored (did you mean sasl.jaas.config?)'])
    assert.deepEqual(warningsFor(config, 'ssl.keystore.pasword'), ['is not a key kmirror or MM2 knows, so it is ignored (did you mean ssl.keystore.password?)'])
    assert.deepEqual(warningsFor(config, 'ssl.truststore.passwrd'), ['is not a key kmirror or MM2 knows, so it is ignored (did you mean ssl.truststore.password?)'])
    assert.deepEqual(warningsFor(config, 'A.consumer.sasl.jaas.confg'), ['is not a Kafka client setting, so no client of cluster A reads it (did you mean A.consumer.sasl.jaas.config?)'])
    const text = describeConfig(config, selectFlows(config))
    for (const secret of ['misspelt-top-secret', 'keystore-misspelt', 'truststore-misspelt', 'consumer-misspelt', 'correct-secret']) {
      assert.ok(!text.includes(secret), secret)
    }
    assert.match(text, /sasl\.jaas\.confg = org\.apache\.kafka\.common\.security\.plain\.PlainLoginModule required username="alice" password="\[redacted\]";/)
  })

  it('does not pass misspelt ssl.* and sasl.* keys to the clients, as MM2 does not', () => {
    const config = parse(twoClusters('A.sasl.jaas.confg = x', 'A.ssl.keystore.pasword = y'))
    assert.equal(config.flows[0]?.source.consumer['sasl.jaas.confg'], undefined)
    assert.equal(config.flows[0]?.source.admin['ssl.keystore.pasword'], undefined)
  })
})

describe('URL credentials', () => {
  it('takes the user info up to the last @ (a password may hold one), in every URL of a list', () => {
    const { certain } = secretValues({ 'sasl.oauthbearer.jwks.endpoint.url': 'https://svc:p@ssw0rd!@idp/token', 'A.consumer.schema.registry.url': 'https://u1:one@h1/x,https://u2:two@h2/y' })
    for (const secret of ['p@ssw0rd!', 'svc:p@ssw0rd!', 'one', 'two']) assert.ok(certain.includes(secret), secret)
    assert.equal(redactValue('A.consumer.schema.registry.url', 'https://u1:one@h1/x,https://u2:two@h2/y').includes('two'), false)
  })

  it('keeps a comma inside one URL in it: a password, or a query list', () => {
    const { certain } = secretValues({ 'A.consumer.schema.registry.url': 'https://svc:pa,ss@reg:8081', 'B.consumer.other.url': 'https://reg/x?ids=1,2&api_key=SECRET' })
    assert.ok(certain.includes('pa,ss'))
    assert.ok(certain.includes('ids=1,2&api_key=SECRET'))
    assert.equal(redactValue('B.consumer.other.url', 'https://reg/x?ids=1,2&api_key=SECRET').includes('SECRET'), false)
  })
})
