/**
 * A real MirrorMaker 2 4.1.1 worker as DescribeGroups showed it (group `<source>-mm2`, protocol `sessioned`, one
 * worker, a flow with two source tasks, `tasks.max = 2`): captured on the test clusters.
 */
import { hex } from '../unit/formats/hex.ts'

const LEADER = '0035 | 613033613062392d3e623662613365612d36373361666533372d393732662d343830342d393835622d376435613731663835663530'
const URL = '0017 | 687474703a2f2f3132372e302e302e313a34303138332f'

/** Captured from MM2 4.1.1: JoinGroup metadata v2 whose allocation holds the three MM2 connectors. */
export const MM2_411_METADATA = hex(`0002 | ${URL} | 0000000000000010 | 000000cc |
  0002 | 0000 | ${LEADER} | ${URL} | 000000000000000b | 00000003 |
  0015 4d6972726f72536f75726365436f6e6e6563746f72 | 00000001 ffffffff |
  0018 4d6972726f72486561727462656174436f6e6e6563746f72 | 00000001 ffffffff |
  0019 4d6972726f72436865636b706f696e74436f6e6e6563746f72 | 00000001 ffffffff |
  00000000 | 00000000`)
/** Captured from MM2 4.1.1: the next assignment (v2) adds MirrorSourceConnector tasks 0 and 1. */
export const MM2_411_ASSIGNMENT = hex(`0002 | 0000 | ${LEADER} | ${URL} | 0000000000000010 | 00000001 |
  0015 4d6972726f72536f75726365436f6e6e6563746f72 | 00000002 00000000 00000001 | 00000000 | 00000000`)
