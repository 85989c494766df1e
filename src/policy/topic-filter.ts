import { compileJavaRegexList } from './java-regex.ts'

/** A predicate on topic names, like MM2's TopicFilter.shouldReplicateTopic. */
export type TopicFilter = (topic: string) => boolean

export interface TopicFilterConfig {
  /** `topics`: Java regexes; a topic must match one of them as a whole. Empty: nothing is included. */
  readonly topics: readonly string[]
  /** `topics.exclude`: Java regexes; a match excludes the topic even when it is included. Empty: nothing is excluded. */
  readonly topicsExclude: readonly string[]
}

/**
 * MM2's DefaultTopicFilter: included and not excluded. Throws JavaRegexError for a pattern JavaScript cannot
 * express; configuration validation compiles the same lists first, so at run time this does not throw.
 */
export function createTopicFilter (config: TopicFilterConfig): TopicFilter {
  const include = compileJavaRegexList(config.topics)
  const exclude = compileJavaRegexList(config.topicsExclude)
  return topic => include !== null && include.test(topic) && (exclude === null || !exclude.test(topic))
}
