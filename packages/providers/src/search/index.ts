export { searxng } from './searxng';
export { brave } from './brave';
