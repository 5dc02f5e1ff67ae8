from gpuopt._entry import main

main()
