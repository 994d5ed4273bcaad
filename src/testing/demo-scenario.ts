/**
 * The demo task that `horizon-harness replay` and `npm run demo` run offline, and what the replayed agent knows of it
 * (exported from `horizon-harness/testing` as an example scenario for `replayBackend`).
 * @module
 */
import type { ReplayScenario } from './replay-backend.js';

/** The demo request: a three-section itinerary file. */
export const DEMO_TASK =
  'Plan a relaxed 3-day trip to Lisbon for two people in spring. Write itinerary.md with three sections: ' +
  '"Day by day" (morning/afternoon/evening), "Budget" (a table in euros) and "Packing list".';

/** The replayed agent forgets the packing list in every first draft, so verification and one repair show up. */
export const DEMO_SCENARIO: ReplayScenario = {
  file: 'itinerary.md',
  title: 'Three relaxed days in Lisbon',
  sections: [
    {
      heading: 'Day by day',
      body: '- Day 1: Alfama and the castle; fado in the evening.\n- Day 2: Belém by tram 15.\n- Day 3: Sintra day trip.',
    },
    {
      heading: 'Budget',
      body: '| Item | EUR |\n|---|---|\n| Hotel, 3 nights | 420 |\n| Food | 240 |\n| Transport | 60 |\n| Total | 720 |',
    },
    { heading: 'Packing list', body: '- Comfortable shoes (hills!)\n- Light rain jacket\n- Sunscreen' },
  ],
  forgotten: 'Packing list',
  forgets: 'always',
};
