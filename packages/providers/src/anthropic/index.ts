export { anthropic, ANTHROPIC_VERSION } from './anthropic';
export { ANTHROPIC_THINKING_BUDGETS } from './anthropic-thinking';
