import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { principalArg, shellWord, toolCommand, toolConnection } from '../../../src/kafka/tool-command.ts'
import { processRedactor } from '../../../src/redactor.ts'

describe('the Kafka tool lines remedies print', () => {
  it('name the brokers, so that the line runs as printed on a PLAINTEXT cluster', () => {
    assert.equal(toolCommand('kafka-topics.sh', { alias: 'A', brokers: 'h1:9092,h2:9092', protocol: 'PLAINTEXT' }, '--describe --topic t'),
      'kafka-topics.sh --bootstrap-server h1:9092,h2:9092 --describe --topic t')
    assert.equal(toolCommand('kafka-topics.sh', { alias: 'A', brokers: 'h1:9092', protocol: 'plaintext' }, '--list'), 'kafka-topics.sh --bootstrap-server h1:9092 --list')
  })

  it('ask for the client properties of a secured cluster: an admin\'s for kafka-acls.sh or when asked, any client\'s otherwise', () => {
    assert.equal(toolCommand('kafka-consumer-groups.sh', { alias: 'dc-1', brokers: 'h:9093', protocol: 'SASL_SSL' }, '--describe --group g'),
      'kafka-consumer-groups.sh --bootstrap-server h:9093 --command-config CLIENT_PROPERTIES_FILE_OF_dc-1 --describe --group g')
    assert.equal(toolCommand('kafka-consumer-groups.sh', { alias: 'B', brokers: 'h:9093', protocol: 'SSL' }, '--delete-offsets', 'ADMIN'),
      'kafka-consumer-groups.sh --bootstrap-server h:9093 --command-config ADMIN_PROPERTIES_FILE_OF_B --delete-offsets')
    assert.equal(toolConnection('kafka-acls.sh', { alias: 'B', brokers: 'h:9093', protocol: 'SSL' }), '--bootstrap-server h:9093 --command-config ADMIN_PROPERTIES_FILE_OF_B')
  })

  it('print placeholders a shell reads as words: brokers not known, an alias with shell syntax, an unnamed principal', () => {
    const line = toolCommand('kafka-acls.sh', { alias: 'a b>c' }, `--add --allow-principal ${principalArg('the principal kmirror authenticates as on cluster a b>c', { alias: 'a b>c' })}`)
    assert.equal(line, 'kafka-acls.sh --bootstrap-server BOOTSTRAP_SERVERS_OF_a_b_c --add --allow-principal PRINCIPAL_OF_a_b_c')
    assert.doesNotMatch(line, /[<>|;&$`]/)
  })

  it('quote values from the clusters that a shell would split or expand, and leave plain ones alone', () => {
    assert.equal(shellWord('User:CN=kmirror,O=acme'), 'User:CN=kmirror,O=acme')
    assert.equal(shellWord('app group$1'), "'app group$1'")
    assert.equal(shellWord("it's"), "'it'\\''s'")
    assert.equal(principalArg('User:bob smith', { alias: 'A' }), "'User:bob smith'")
  })

  it('never print a bootstrap.servers the redactor holds as a secret (a config provider\'s value): a placeholder takes its place', () => {
    // (last in this file: the process's redactor keeps what it is given, and each test file has its own process)
    processRedactor.add({ certain: ['vault-broker:9092'] })
    assert.equal(toolConnection('kafka-topics.sh', { alias: 'A', brokers: 'vault-broker:9092', protocol: 'PLAINTEXT' }), '--bootstrap-server BOOTSTRAP_SERVERS_OF_A')
  })
})
