export { gemini } from './gemini';
export { GEMINI_THINKING_BUDGETS, GEMINI_THINKING_LEVELS } from './gemini-thinking';
