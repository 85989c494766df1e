import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError, ErrorCodes } from '../../../src/errors.ts'
import { parseConfig } from '../../../src/config/load.ts'
import { parse, problemFor, problemsOf, twoClusters } from './fixtures.ts'

describe('validation reports every problem at once', () => {
  it('reports all problems of a file in one ConfigError, each under the key to fix', () => {
    const problems = problemsOf([
      'clusters = A, B',
      'A.bootstrap.servers = a:9092',
      'A->B.enabled = true',
      'A->B.topics = orders(',
      'A->B.refresh.topics.enabled = yes',
      'A->B.replication.factor = two',
      'offset-syncs.topic.location = nowhere',
      'replication.policy.class = com.example.MyPolicy',
      'C.bootstrap.servers = c:9092',
      'this is not a property'
    ].join('\n'))
    assert.deepEqual(problems.map(p => p.key ?? p.message.slice(0, 7)).sort(), [
      'A->B.refresh.topics.enabled', 'A->B.replication.factor', 'A->B.topics', 'B.bootstrap.servers',
      'C.bootstrap.servers', 'line 10', 'offset-syncs.topic.location', 'replication.policy.class'
    ])
  })

  it('throws a ConfigError with the CONFIG_INVALID code and the file name in its message', () => {
    assert.throws(() => parseConfig('x = 1', '/etc/kmirror/mm2.properties'), (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.equal(err.code, ErrorCodes.CONFIG_INVALID)
      assert.match(err.message, /^invalid configuration \/etc\/kmirror\/mm2\.properties \(1 problem\):\n {2}- clusters: is missing/)
      return true
    })
  })
})

describe('clusters', () => {
  it('is required', () => {
    assert.match(problemFor(problemsOf('A.bootstrap.servers = a:1'), 'clusters').message, /is missing: list the cluster aliases, e\.g\. clusters = A, B/)
  })

  it('must not be empty', () => {
    assert.match(problemFor(problemsOf('clusters = '), 'clusters').message, /is empty/)
  })

  it('rejects empty aliases, aliases with whitespace or "->", and duplicates, all at once', () => {
    const problems = problemsOf('clusters = A,, B\\u0020C, x->y, A')
    assert.deepEqual(problems.map(p => p.message.slice(0, 40)), [
      'contains an empty alias (two commas in a',
      'alias "B C" contains whitespace, which c',
      'alias "x->y" contains "->", which separa',
      'lists A twice: list each alias once'
    ])
  })
})

describe('malformed lines', () => {
  it('rejects a line with no separator whose key is not a known key, naming its line number and text', () => {
    const problems = problemsOf(twoClusters('', '', 'this is not a property'))
    assert.equal(problems.length, 1)
    assert.equal(problems[0]?.message, 'line 7: "this is not a property" has no \'=\' or \':\' and "this" is not a known key: write key = value, or start the line with # to make it a comment')
  })

  it('accepts Java\'s "key value" lines when the key is a known key shape', () => {
    assert.doesNotThrow(() => parseConfig(twoClusters('A->B.topics orders', 'A.consumer.max.poll.records 5', 'topics.exclude none'), 'f'))
  })

  it('rejects a backslash continuation at the end of the file', () => {
    const problem = problemFor(problemsOf(twoClusters('A->B.topics = a, \\')), 'A->B.topics')
    assert.match(problem.message, /^line 5: the value ends with a '\\' line continuation but the file ends there/)
  })
})

describe('aliases in keys', () => {
  it('rejects flow keys naming an alias not in clusters, suggesting a close one', () => {
    const problems = problemsOf(twoClusters('A->b.enabled = true', 'X->Y.topics = t'))
    assert.match(problemFor(problems, 'A->b.enabled').message, /names cluster alias b \(did you mean B\?\), not in clusters = A, B/)
    assert.match(problemFor(problems, 'X->Y.topics').message, /names cluster alias X and Y, not in clusters = A, B/)
  })

  it('rejects cluster keys naming an unknown alias, but not misspelt top-level keys', () => {
    const problems = problemsOf(twoClusters('C.bootstrap.servers = c:1', 'tpoics.exclude = x'))
    assert.equal(problems.length, 1)
    assert.match(problemFor(problems, 'C.bootstrap.servers').message, /^C is not a cluster alias \(clusters = A, B\): fix the alias, add it to clusters, or remove the key$/)
  })

  it('treats unknown keys under common Kafka prefixes as unknown keys, not unknown aliases', () => {
    assert.doesNotThrow(() => parseConfig(twoClusters('metrics.port = 9090', 'plugin.path = /opt'), 'f'))
  })

  it('reports a "key value" line with an unknown alias once, as an unknown alias', () => {
    const problems = problemsOf(twoClusters('A->C.enabled true'))
    assert.equal(problems.length, 1)
    assert.equal(problems[0]?.key, 'A->C.enabled')
  })

  it('rejects a flow from a cluster to itself', () => {
    assert.match(problemFor(problemsOf(twoClusters('A->A.enabled = true')), 'A->A.enabled').message, /a cluster cannot replicate to itself/)
  })
})

describe('bootstrap.servers', () => {
  it('is required for every cluster of an enabled flow, and only for those', () => {
    const problems = problemsOf('clusters = A, B, C\nA.bootstrap.servers = a:1\nA->B.enabled = true')
    assert.deepEqual(problems, [{ key: 'B.bootstrap.servers', message: 'is missing: set it to the host:port list of cluster B (flow A->B uses it)' }])
  })

  it('must list host:port entries', () => {
    const problems = problemsOf(twoClusters('B.bootstrap.servers = b1, b2:9092'))
    assert.equal(problemFor(problems, 'B.bootstrap.servers').message, 'entries must be host:port, not "b1"')
  })
})

describe('typed values', () => {
  it('accepts true/false in any case for ConfigDef booleans and rejects anything else', () => {
    assert.doesNotThrow(() => parseConfig(twoClusters('refresh.topics.enabled = FALSE'), 'f'))
    assert.equal(problemFor(problemsOf(twoClusters('refresh.topics.enabled = on')), 'refresh.topics.enabled').message, 'must be true or false, not "on"')
  })

  it('rejects numbers that are not Java integers of the key\'s width', () => {
    const problems = problemsOf(twoClusters('A->B.offset.lag.max = 1.5', 'offset-syncs.topic.replication.factor = 40000', 'B.offset.flush.interval.ms = soon'))
    assert.match(problemFor(problems, 'A->B.offset.lag.max').message, /must be a whole number \(a Java long\), not "1\.5"/)
    assert.match(problemFor(problems, 'offset-syncs.topic.replication.factor').message, /a Java short/)
    assert.match(problemFor(problems, 'B.offset.flush.interval.ms').message, /not "soon"/)
  })

  it('accepts -1 as the broker default replication factor but rejects 0', () => {
    assert.doesNotThrow(() => parseConfig(twoClusters('replication.factor = -1'), 'f'))
    assert.equal(problemFor(problemsOf(twoClusters('replication.factor = 0')), 'replication.factor').message, 'must be at least 1 (or -1 for the target broker\'s default), not 0')
  })

  it('rejects offset-syncs.topic.location values other than source and target (case-sensitive, as in MM2)', () => {
    assert.equal(problemFor(problemsOf(twoClusters('A->B.offset-syncs.topic.location = Target')), 'A->B.offset-syncs.topic.location').message, 'must be one of source, target, not "Target"')
  })
})

describe('regular expressions', () => {
  it('rejects an invalid regex in topics, topics.exclude, groups, groups.exclude and config.properties.exclude', () => {
    const keys = ['topics', 'A->B.topics.exclude', 'groups', 'A->B.groups.exclude', 'config.properties.exclude']
    const problems = problemsOf(twoClusters(...keys.map(key => `${key} = ok, bad[`)))
    for (const key of keys) assert.match(problemFor(problems, key).message, /invalid Java regular expression "bad\[".*: fix the regular expression\./)
  })

  it('explains that a regex with a comma is split into two', () => {
    const problem = problemFor(problemsOf(twoClusters('topics = a{1,3}')), 'topics')
    assert.match(problem.message, /Lists are split at every comma/)
  })
})

describe('replication policy', () => {
  it('accepts the two MM2 policies by full or simple class name', () => {
    for (const name of ['DefaultReplicationPolicy', 'IdentityReplicationPolicy', 'org.apache.kafka.connect.mirror.IdentityReplicationPolicy']) {
      assert.doesNotThrow(() => parseConfig(twoClusters(`replication.policy.class = ${name}`), 'f'))
    }
  })

  it('rejects custom policy classes, naming both supported ones', () => {
    const problem = problemFor(problemsOf(twoClusters('A->B.replication.policy.class = com.acme.Policy')), 'A->B.replication.policy.class')
    assert.equal(problem.message, 'custom replication policy classes are not supported ("com.acme.Policy"): use org.apache.kafka.connect.mirror.DefaultReplicationPolicy or org.apache.kafka.connect.mirror.IdentityReplicationPolicy')
  })

  it('rejects an empty separator', () => {
    assert.match(problemFor(problemsOf(twoClusters('replication.policy.separator =')), 'replication.policy.separator').message, /must not be empty/)
  })
})

describe('security', () => {
  it('rejects an unknown security.protocol wherever it is written', () => {
    const problems = problemsOf(twoClusters('security.protocol = TLS', 'A.consumer.security.protocol = SSL_PLAIN', 'A->B.source.cluster.security.protocol = X'))
    for (const key of ['security.protocol', 'A.consumer.security.protocol', 'A->B.source.cluster.security.protocol']) {
      assert.match(problemFor(problems, key).message, /must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/)
    }
  })

  it('accepts PLAIN, SCRAM and OAUTHBEARER, says GSSAPI and AWS_MSK_IAM are not supported where they are written, and rejects others', () => {
    const problems = problemsOf(twoClusters('A.sasl.mechanism = GSSAPI', 'B.consumer.sasl.mechanism = AWS_MSK_IAM', 'B.sasl.mechanism = OAUTHBEARER', 'sasl.mechanism = DIGEST', 'A.admin.sasl.mechanism = plain'))
    assert.equal(problemFor(problems, 'A.sasl.mechanism').message, 'GSSAPI (Kerberos) is not supported: kmirror supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER')
    assert.match(problemFor(problems, 'B.consumer.sasl.mechanism').message, /^AWS_MSK_IAM is not supported .*kmirror supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER/)
    assert.equal(problems.some(p => p.key === 'B.sasl.mechanism'), false)
    assert.match(problemFor(problems, 'sasl.mechanism').message, /"DIGEST" is not a SASL mechanism kmirror supports/)
    assert.match(problemFor(problems, 'A.admin.sasl.mechanism').message, /case-sensitive: write PLAIN/)
  })

  it('reports a SASL protocol without sasl.mechanism, since the Java default GSSAPI is not supported', () => {
    const problem = problemFor(problemsOf(twoClusters('B.security.protocol = SASL_SSL')), 'B.sasl.mechanism')
    assert.match(problem.message, /is not set, so the Java default GSSAPI \(Kerberos\) applies/)
  })

  it('accepts JKS, PKCS12 and PEM store types in any case, and names other types with the way to convert them', () => {
    const problems = problemsOf(twoClusters('A.ssl.truststore.type = jks', 'A.ssl.keystore.type = PKCS12', 'B.ssl.keystore.type = PEM', 'B.ssl.truststore.type = JCEKS'))
    assert.deepEqual(problems.map(p => p.key), ['B.ssl.truststore.type'])
    assert.match(problemFor(problems, 'B.ssl.truststore.type').message, /"JCEKS" stores are not supported: use JKS, PKCS12 or PEM \(keytool -importkeystore/)
  })

  it('checks the OAUTHBEARER refresh and retry numbers where they are written', () => {
    const problems = problemsOf(twoClusters('A.sasl.login.refresh.window.factor = high', 'B.sasl.login.retry.backoff.ms = soon', 'sasl.login.refresh.window.jitter = 0.1'))
    assert.match(problemFor(problems, 'A.sasl.login.refresh.window.factor').message, /must be a number, not "high"/)
    assert.match(problemFor(problems, 'B.sasl.login.retry.backoff.ms').message, /must be a whole number/)
    assert.equal(problems.length, 2)
  })

  it('keeps the OAUTHBEARER refresh settings within Java\'s ranges, naming the key and the range', () => {
    const problems = problemsOf(twoClusters(
      'A.sasl.login.refresh.window.factor = 0.4', 'B.sasl.login.refresh.window.factor = 1.01', 'A.consumer.sasl.login.refresh.window.jitter = 0.3',
      'sasl.login.refresh.min.period.seconds = 901', 'A.sasl.login.refresh.buffer.seconds = 3601', 'B.sasl.login.refresh.buffer.seconds = -1',
      'B.admin.sasl.login.read.timeout.ms = -5'
    ))
    assert.deepEqual(Object.fromEntries(problems.map(p => [p.key, p.message])), {
      'A.sasl.login.refresh.window.factor': 'must be from 0.5 to 1, not 0.4',
      'B.sasl.login.refresh.window.factor': 'must be from 0.5 to 1, not 1.01',
      'A.consumer.sasl.login.refresh.window.jitter': 'must be from 0 to 0.25, not 0.3',
      'sasl.login.refresh.min.period.seconds': 'must be from 0 to 900, not 901',
      'A.sasl.login.refresh.buffer.seconds': 'must be from 0 to 3600, not 3601',
      'B.sasl.login.refresh.buffer.seconds': 'must be from 0 to 3600, not -1',
      'B.admin.sasl.login.read.timeout.ms': 'must be at least 0, not -5'
    })
    const bounds = ['A.sasl.login.refresh.window.factor = 0.5', 'B.sasl.login.refresh.window.factor = 1.0', 'sasl.login.refresh.window.jitter = 0.25',
      'sasl.login.refresh.min.period.seconds = 900', 'sasl.login.refresh.buffer.seconds = 0']
    assert.doesNotThrow(() => parse(twoClusters(...bounds)))
  })
})

describe('offset syncs', () => {
  it('rejects offset-syncs keys on a flow whose offset syncs are off, as MM2 rejects that connector config', () => {
    const problems = problemsOf(twoClusters('A->B.emit.offset-syncs.enabled = false', 'A->B.offset-syncs.topic.location = target'))
    assert.match(problemFor(problems, 'offset-syncs.topic.location').message, /flow A->B has emit\.offset-syncs\.enabled = false/)
  })
})
