/**
 * What this process tells the operator of the brokers that trouble it: silent (connections cut), slow (a request
 * held 10 s), out of reach for the data path's fetches while the others answer, and throttling it for a quota. Each report is logged, counted
 * and noted in the recent troubles `/status` lists (broker-troubles.ts).
 *
 * Invariants:
 * - The start of a trouble is logged at warn once, its repeats at debug, its end (when there is one) at info.
 * - Every report is counted, the repeats included: the metrics and `/status` say how often, the log says what.
 */
import { onLeaderOutage, OutagePhases, type LeaderOutageReport } from '../kafka/leader-outages.ts'
import { onSlowBroker } from '../kafka/fenced-brokers.ts'
import { onQuotaThrottle, type ThrottleReport } from '../kafka/quota-throttles.ts'
import { onSilence, type SilenceReport } from '../kafka/silent-brokers.ts'
import { toolCommand } from '../kafka/tool-command.ts'
import type { SlowBrokerReport } from '../kafka/slow-brokers.ts'
import type { Logger } from '../logger.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { BrokerTroubles } from './broker-troubles.ts'

/** Reports every broker trouble of the process until the returned function is called. */
export function reportBrokerTroubles (log: Logger, metrics: Metrics, troubles: BrokerTroubles): () => void {
  const stops = [
    onSilence(report => {
      troubles.silence(report)
      metrics.inc('brokerSilences', { broker: report.broker })
      logSilence(log, report)
    }),
    onSlowBroker(report => {
      troubles.slow(report)
      metrics.inc('brokerSlowRequests', { broker: report.broker })
      logSlowBroker(log, report)
    }),
    onQuotaThrottle(report => {
      troubles.throttled(report)
      metrics.inc('quotaThrottleSeconds', { broker: report.broker, request: report.api }, report.throttleMs / 1000)
      logThrottle(log, report)
    }),
    onLeaderOutage(report => {
      if (report.phase === OutagePhases.DOWN || report.phase === OutagePhases.AGAIN) {
        troubles.unreachable(report)
        metrics.inc('sourceFetchFailures', { broker: report.broker })
      }
      logLeaderOutage(log, report)
    })
  ]
  return () => { for (const stop of stops) stop() }
}

/** A broker found silent and this process's connections to it cut (kafka/silent-brokers.ts). */
function logSilence (log: Logger, { broker, clusters, closed, cause, again, fenced }: SilenceReport): void {
  const where = clusters.length === 0 ? '' : ` of ${clusters.join(', ')}`
  const message = fenced
    ? `broker ${broker}${where} was fenced by its cluster while requests waited on it (${cause}): closed this process's ${closed} connection(s) to it, so the requests waiting on it fail now and are sent again where the cluster moved its work; look at that broker (frozen, a long pause, cut off from its controller?)`
    : `broker ${broker}${where} answered nothing in time (${cause}): it accepts connections but is silent (frozen, a long pause, cut off?); closed this process's ${closed} connection(s) to it, so the requests waiting on it fail now and are sent again where the cluster moves its work once it fences the broker`
  // The same outage going on (the broker still named by the cluster, asked again): once at warn is enough.
  if (again) log.debug({ broker, clusters, closed, cause }, message)
  else log.warn({ broker, clusters, closed, cause }, message)
}

function logSlowBroker (log: Logger, { broker, cluster, api, waitedMs, first }: SlowBrokerReport): void {
  const message = `broker ${broker} of ${cluster} is slow: a ${api} request to it has waited ${(waitedMs / 1000).toFixed(1)} s without an answer. ` +
    'What it leads or coordinates waits meanwhile (a write round waits for its slowest broker; a fetch round leaves it out and fetches from the others); its connections are cut once its cluster fences it or the ' +
    'request times out (the request.timeout.ms of the producer, consumer or admin client that sent it). Look at that broker: a hung or full disk, long GC pauses, ' +
    'an overloaded request queue, a client quota throttling kmirror, or (for a Produce) one of its followers behind (acks=all waits for them)'
  // The same broker's trouble going on: once at warn a minute is enough.
  if (first) log.warn({ broker, cluster, api, waitedMs }, message)
  else log.debug({ broker, cluster, api, waitedMs }, message)
}

/** What a quota on each request slows, and the quotas that may be the one. */
const THROTTLED: Readonly<Record<string, { effect: string, keys: string }>> = {
  Produce: { effect: 'every partition a flow writes goes at the quota\'s pace (a write round waits for its slowest broker)', keys: 'producer_byte_rate, or request_percentage' },
  Fetch: { effect: 'the partitions it leads are read at the quota\'s pace (the other brokers\' are fetched meanwhile)', keys: 'consumer_byte_rate, or request_percentage' },
  CreateTopics: { effect: 'remote topics are created at the quota\'s pace', keys: 'controller_mutation_rate' },
  CreatePartitions: { effect: 'remote partitions are added at the quota\'s pace', keys: 'controller_mutation_rate' },
  DeleteTopics: { effect: 'remote topics are deleted at the quota\'s pace', keys: 'controller_mutation_rate' }
}

/** A broker throttling this process for a client quota (kafka/quota-throttles.ts). */
function logThrottle (log: Logger, { broker, cluster, tool, api, throttleMs, first }: ThrottleReport): void {
  const { effect, keys } = THROTTLED[api] ?? { effect: 'those requests go at the quota\'s pace', keys: 'request_percentage' }
  const where = cluster === undefined ? '' : ` of ${cluster}`
  const reach = tool ?? {}
  const see = `${toolCommand('kafka-configs.sh', reach, '--describe --entity-type users')} and ${toolCommand('kafka-configs.sh', reach, '--describe --entity-type clients')}`
  const message = `broker ${broker}${where} throttles kmirror's ${api} requests for a client quota: it asked for a pause of ${(throttleMs / 1000).toFixed(1)} s, ` +
    `which kmirror waits out before its next ${api} to it, so ${effect}. Nothing is lost; to go faster, raise or remove the quota (${keys}) set on kmirror's ` +
    `principal or client id (kmirror|<flow>|<role>, e.g. kmirror|A->B|replication-producer; to see them: ${see}); kmirror_quota_throttle_seconds_total counts the pauses`
  // The same broker throttling on: once at warn a minute is enough.
  if (first) log.warn({ broker, cluster, api, throttleMs }, message)
  else log.debug({ broker, cluster, api, throttleMs }, message)
}

/** A source broker the data path cannot fetch from while the others answer (kafka/leader-outages.ts). */
function logLeaderOutage (log: Logger, report: LeaderOutageReport): void {
  const { phase, broker, node, cluster, reader, partitions, named, cause, failures, outageMs, retryInMs } = report
  // `flow`: each flow reading the cluster reports the broker for its own partitions.
  const fields = { broker, node, cluster, ...(reader === undefined ? {} : { flow: reader }), partitions, failures, outageMs, retryInMs }
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`
  const which = `${partitions} partition(s) it leads (${named.join(', ')}${partitions > named.length ? ', ...' : ''})`
  switch (phase) {
    case OutagePhases.DOWN:
      log.warn({ ...fields, cause }, `cannot fetch from broker ${node} (${broker}) of ${cluster}: ${cause}. The ${which} wait where they are, nothing skipped, ` +
        `and are asked again in ${seconds(retryInMs)} (then less and less often: every 2 s at most, or twice as long as a try that timed out); the partitions the other brokers lead copy on. ` +
        'A broker killed or restarting answers again, or its cluster moves its leadership to another replica (after its broker session timeout); if neither happens, look at that broker')
      return
    case OutagePhases.AGAIN:
      log.debug({ ...fields, cause }, `still cannot fetch from broker ${node} (${broker}) of ${cluster}; the ${which} wait`)
      return
    case OutagePhases.BACK:
      log.info(fields, `broker ${node} (${broker}) of ${cluster} answers fetches again after ${seconds(outageMs)} (${failures} failed tr${failures === 1 ? 'y' : 'ies'}); the partitions it leads copy on`)
      return
    case OutagePhases.MOVED:
      log.info(fields, `broker ${node} (${broker}) of ${cluster} leads none of the partitions kmirror reads any more, ${seconds(outageMs)} after its fetches began to fail: ` +
        'its cluster moved their leadership to other replicas (copied from there now), or they have no leader until it is back (reported once they wait past health.stall.threshold.ms)')
  }
}
