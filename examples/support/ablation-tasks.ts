/**
 * A small synthetic task set in the AgentIF-OneDay record schema, plus the replay scenario of each task.
 * @module
 */
import type { AgentIfTask } from 'horizon-harness/benchmark';
import type { ReplayScenario } from 'horizon-harness/testing';

/** Three everyday tasks, each asking for a file with named sections. */
export const ABLATION_TASKS: Array<AgentIfTask & { replay: ReplayScenario }> = [
  {
    question_id: 'taskif_9001',
    title: 'Lisbon weekend',
    description:
      'Plan a 3-day Lisbon trip for two. Deliver itinerary.md with the sections "Day by day", "Budget" (a euro table) and "Packing list".',
    attachment_filenames: [],
    score_criteria: [
      { content: 'itinerary.md has a "Day by day" section', score: 2 },
      { content: 'itinerary.md has a "Budget" section', score: 2 },
      { content: 'itinerary.md has a "Packing list" section', score: 1 },
      { content: 'No itinerary.md file was delivered', score: -2 },
    ],
    reference_answer_description: '',
    reference_answer_attachment_filenames: [],
    replay: {
      file: 'itinerary.md',
      title: 'Lisbon weekend',
      sections: [
        { heading: 'Day by day', body: 'Alfama, Belém, Sintra.' },
        { heading: 'Budget', body: '| Item | EUR |\n|---|---|\n| Total | 720 |' },
        { heading: 'Packing list', body: 'Shoes, rain jacket.' },
      ],
      forgotten: 'Packing list',
      forgets: 'single',
    },
  },
  {
    question_id: 'taskif_9002',
    title: 'Study plan',
    description:
      'Make a 4-week study plan for linear algebra. Deliver plan.md with the sections "Weekly goals", "Resources" and "Self-tests".',
    attachment_filenames: [],
    score_criteria: [
      { content: 'plan.md has a "Weekly goals" section', score: 2 },
      { content: 'plan.md has a "Resources" section', score: 1 },
      { content: 'plan.md has a "Self-tests" section', score: 2 },
    ],
    reference_answer_description: '',
    reference_answer_attachment_filenames: [],
    replay: {
      file: 'plan.md',
      title: 'Linear algebra in four weeks',
      sections: [
        { heading: 'Weekly goals', body: 'Vectors, matrices, eigenvalues, SVD.' },
        { heading: 'Resources', body: 'Strang, 3Blue1Brown.' },
        { heading: 'Self-tests', body: 'One problem set per week.' },
      ],
      forgotten: 'Self-tests',
      forgets: 'always',
    },
  },
  {
    question_id: 'taskif_9003',
    title: 'Team offsite memo',
    description: 'Write memo.md for a one-day team offsite with the sections "Agenda" and "Logistics".',
    attachment_filenames: [],
    score_criteria: [
      { content: 'memo.md has an "Agenda" section', score: 1 },
      { content: 'memo.md has a "Logistics" section', score: 1 },
    ],
    reference_answer_description: '',
    reference_answer_attachment_filenames: [],
    replay: {
      file: 'memo.md',
      title: 'Team offsite',
      sections: [
        { heading: 'Agenda', body: '9:00 kickoff, 12:00 lunch, 15:00 retro.' },
        { heading: 'Logistics', body: 'Venue booked; train at 8:10.' },
      ],
    },
  },
];
