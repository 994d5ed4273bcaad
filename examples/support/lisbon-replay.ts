/**
 * What the quickstart's replayed agent knows of its task, for runs without an API key.
 * @module
 */
import type { ReplayScenario } from 'horizon-harness/testing';

/** The itinerary's sections; every first draft forgets the packing list, so verification and one repair show up. */
export const LISBON_REPLAY: ReplayScenario = {
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
